"""The shop's order processor.

Invoked directly with an order, it prices the order and confirms it; subscribed to the
shop-order-events topic, it tells customers their order is confirmed, reading the order
from the message's attributes. It imports nothing but os, so it starts in milliseconds.
"""

import os

CURRENCY = os.environ.get("SHOP_CURRENCY", "EUR")


def handler(event, context):
    if "Records" in event:
        return notify(event["Records"])
    return confirm(event)


def confirm(order):
    cents = sum(line["quantity"] * line["unitCents"] for line in order["lines"])
    total = "%d.%02d" % divmod(cents, 100)
    print("order %s: %d lines, total %s %s" % (order["orderId"], len(order["lines"]), total, CURRENCY))
    return {"orderId": order["orderId"], "status": "CONFIRMED", "total": total, "currency": CURRENCY}


def notify(records):
    for record in records:
        attributes = {name: a["Value"] for name, a in record["Sns"]["MessageAttributes"].items()}
        print("emailing %(customerId)s: order %(orderId)s is %(status)s" % attributes)
    return {"notified": len(records)}
