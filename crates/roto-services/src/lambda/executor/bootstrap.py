"""Roto's Python runtime: the Lambda Runtime API loop around the function's handler.

Started by Roto's process executor with the standard Lambda environment; imports
`module.function` from _HANDLER under LAMBDA_TASK_ROOT, then serves invocations one at a
time. Before posting each result it writes an end marker line, so Roto knows it has read
all of the invocation's output.
"""

import http.client
import importlib
import json
import os
import sys
import time
import traceback

END_MARKER = b"\x1eroto-end\n"
API = os.environ["AWS_LAMBDA_RUNTIME_API"]
HOST, _, PORT = API.rpartition(":")
CONN = http.client.HTTPConnection(HOST, int(PORT))


def call(method, path, body=None, headers=None):
    CONN.request(method, "/2018-06-01/runtime/" + path, body=body, headers=headers or {})
    response = CONN.getresponse()
    return response, response.read()


def end():
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(1, END_MARKER)


def error_document(error, error_type=None, stack=True):
    frames = traceback.extract_tb(error.__traceback__)[1:] if stack else []
    return {
        "errorMessage": str(error),
        "errorType": error_type or type(error).__name__,
        "requestId": "",
        "stackTrace": traceback.format_list(frames),
    }


def report(document):
    lines = "".join(document["stackTrace"])
    tail = "\nTraceback (most recent call last):\n" + lines if lines else ""
    print("[ERROR] %s: %s%s" % (document["errorType"], document["errorMessage"], tail), file=sys.stderr)


class Context:
    def __init__(self, request_id, deadline_ms, arn, client_context):
        self.aws_request_id = request_id
        self.invoked_function_arn = arn
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION")
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME")
        self.client_context = client_context
        self.identity = None
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self):
        return max(0, self._deadline_ms - int(time.time() * 1000))


def init_failure(document):
    report(document)
    end()
    call("POST", "init/error", json.dumps(document), {"Lambda-Runtime-Function-Error-Type": document["errorType"]})
    sys.exit(1)


def load():
    handler = os.environ.get("_HANDLER", "")
    module_name, _, function_name = handler.rpartition(".")
    if not module_name:
        init_failure({"errorMessage": "Bad handler '%s': not enough values to unpack (expected 2, got 1)" % handler,
                      "errorType": "Runtime.MalformedHandlerName", "requestId": "", "stackTrace": []})
    sys.path.insert(0, os.environ["LAMBDA_TASK_ROOT"])
    try:
        module = importlib.import_module(module_name.replace("/", "."))
    except Exception as error:  # noqa: BLE001 - any import failure is the function's
        init_failure({"errorMessage": "Unable to import module '%s': %s" % (module_name, error),
                      "errorType": "Runtime.ImportModuleError", "requestId": "", "stackTrace": []})
    function = getattr(module, function_name, None)
    if function is None:
        init_failure({"errorMessage": "Handler '%s' missing on module '%s'" % (function_name, module_name),
                      "errorType": "Runtime.HandlerNotFound", "requestId": "", "stackTrace": []})
    return function


def main():
    function = load()
    while True:
        response, body = call("GET", "invocation/next")
        request_id = response.getheader("Lambda-Runtime-Aws-Request-Id")
        deadline = int(response.getheader("Lambda-Runtime-Deadline-Ms") or 0)
        arn = response.getheader("Lambda-Runtime-Invoked-Function-Arn")
        client_context = response.getheader("Lambda-Runtime-Client-Context")
        os.environ["_X_AMZN_TRACE_ID"] = response.getheader("Lambda-Runtime-Trace-Id") or ""
        context = Context(request_id, deadline, arn, json.loads(client_context) if client_context else None)
        try:
            event = json.loads(body) if body else {}
            result = function(event, context)
        except Exception as error:  # noqa: BLE001 - the function's failure is reported
            document = error_document(error)
            report(document)
            end()
            call("POST", "invocation/%s/error" % request_id, json.dumps(document),
                 {"Lambda-Runtime-Function-Error-Type": "Unhandled"})
            continue
        try:
            payload = json.dumps(result)
        except (TypeError, ValueError) as error:
            document = error_document(error, "Runtime.MarshalError", stack=False)
            document["errorMessage"] = "Unable to marshal response: %s" % error
            report(document)
            end()
            call("POST", "invocation/%s/error" % request_id, json.dumps(document),
                 {"Lambda-Runtime-Function-Error-Type": "Runtime.MarshalError"})
            continue
        end()
        call("POST", "invocation/%s/response" % request_id, payload)


if __name__ == "__main__":
    main()
