//! The event bus: asynchronous deliveries between services.
//!
//! A service that causes an effect elsewhere (S3 notifying a queue, SNS fanning out,
//! EventBridge invoking a target) publishes an [`Event`] and returns to its caller at once,
//! as AWS does. A background worker hands each event to the target service's
//! [`Service::deliver`](crate::dispatch::Service::deliver), retrying with exponential
//! back-off, and records every attempt in the trace; when the last attempt fails, the
//! emitting service hears of it through
//! [`Service::delivery_failed`](crate::dispatch::Service::delivery_failed) (SNS moves the
//! message to a dead-letter queue). Events for one target (one queue, one URL) are
//! delivered one after another in publish order, as FIFO topics need; different targets
//! proceed in parallel.

use std::collections::HashMap;
use std::sync::{Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::dispatch::Dispatcher;
use crate::trace::{TraceEntry, TraceKind};
use crate::value::Value;

/// One asynchronous delivery.
#[derive(Debug, Clone)]
pub struct Event {
    /// What happened (`s3:ObjectCreated:Put`, `sns:Notification`).
    pub kind: String,
    /// The emitting service.
    pub source_service: String,
    /// The emitting resource's ARN.
    pub source: String,
    /// The service that receives it.
    pub target_service: String,
    /// The receiving resource (an ARN or URL).
    pub target: String,
    /// The account of the target.
    pub account: String,
    /// The region of the target.
    pub region: String,
    /// What is delivered.
    pub payload: Value,
    /// How many attempts before it is recorded as failed.
    pub max_attempts: u32,
}

/// Why one delivery attempt failed, and whether another attempt could succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryError {
    /// What went wrong, as the trace's `detail` shows it.
    pub message: String,
    /// False when trying again cannot help (an HTTP endpoint answered 400): the bus then
    /// records the attempt as the last one, whatever attempts remain.
    pub retryable: bool,
}

impl DeliveryError {
    /// A failure no retry can fix.
    pub fn permanent(message: impl Into<String>) -> DeliveryError {
        DeliveryError {
            message: message.into(),
            retryable: false,
        }
    }
}

/// A failure the bus retries while attempts remain.
impl From<String> for DeliveryError {
    fn from(message: String) -> DeliveryError {
        DeliveryError {
            message,
            retryable: true,
        }
    }
}

/// The bus: publishers send, one worker delivers.
pub struct EventBus {
    tx: UnboundedSender<Event>,
    rx: Mutex<Option<UnboundedReceiver<Event>>>,
    retry_delay: Mutex<Duration>,
}

impl Default for EventBus {
    fn default() -> EventBus {
        EventBus::new()
    }
}

impl EventBus {
    /// A bus whose worker has not started yet (events queue until it does).
    pub fn new() -> EventBus {
        let (tx, rx) = unbounded_channel();
        EventBus {
            tx,
            rx: Mutex::new(Some(rx)),
            retry_delay: Mutex::new(Duration::from_secs(1)),
        }
    }

    /// Publishes an event; never blocks.
    pub fn publish(&self, event: Event) {
        let _ = self.tx.send(event);
    }

    /// Sets the delay before the first retry (doubled for each later one).
    pub fn set_retry_delay(&self, delay: Duration) {
        *self.retry_delay.lock().unwrap_or_else(|p| p.into_inner()) = delay;
    }

    fn retry_delay(&self) -> Duration {
        *self.retry_delay.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts the worker on the current tokio runtime; later calls do nothing.
    pub(crate) fn start(&self, dispatcher: Weak<Dispatcher>) {
        let Some(mut rx) = self.rx.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return;
        };
        tokio::spawn(async move {
            let mut lanes: HashMap<(String, String), UnboundedSender<Event>> = HashMap::new();
            while let Some(event) = rx.recv().await {
                let key = (event.target_service.clone(), event.target.clone());
                let lane = lanes.entry(key).or_insert_with(|| {
                    let (tx, mut lane_rx) = unbounded_channel::<Event>();
                    let dispatcher = dispatcher.clone();
                    tokio::spawn(async move {
                        while let Some(event) = lane_rx.recv().await {
                            deliver(dispatcher.clone(), event).await;
                        }
                    });
                    tx
                });
                let _ = lane.send(event);
            }
        });
    }
}

async fn deliver(dispatcher: Weak<Dispatcher>, event: Event) {
    let attempts = event.max_attempts.max(1);
    for attempt in 1..=attempts {
        let Some(d) = dispatcher.upgrade() else {
            return;
        };
        let started = Instant::now();
        let result = match d.service(&event.target_service) {
            Some(service) => service.deliver(&event).await,
            None => Err(DeliveryError::from(format!(
                "no service named {}",
                event.target_service
            ))),
        };
        let mut entry = TraceEntry::request(
            &event.account,
            &event.region,
            &event.source_service,
            &event.kind,
        );
        entry.kind = TraceKind::Delivery;
        entry.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        entry.source = Some(event.source.clone());
        entry.target = Some(event.target.clone());
        entry.attempt = Some(attempt);
        let retry = result.as_ref().is_err_and(|e| e.retryable) && attempt < attempts;
        entry.outcome = Some(
            match (&result, retry) {
                (Ok(()), _) => "delivered",
                (Err(_), true) => "retrying",
                (Err(_), false) => "failed",
            }
            .into(),
        );
        entry.detail = result.as_ref().err().map(|e| e.message.clone());
        d.env.trace.record(entry);
        if !retry {
            if let (Err(error), Some(source)) = (&result, d.service(&event.source_service)) {
                source.delivery_failed(&event, &error.message);
            }
            return;
        }
        let delay = d.env.bus.retry_delay() * 2u32.saturating_pow(attempt - 1);
        drop(d);
        crate::timestamp::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{BoxFuture, Context, Env, Request, Response, Service, ServiceSpec};
    use crate::error::{AwsError, AwsResult};
    use crate::store::{Store, StoreMode};
    use crate::trace::TraceFilter;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    static SPEC: ServiceSpec = ServiceSpec {
        name: "sink",
        model: "sqs",
        query_model: None,
        signing_names: &[],
        target_prefix: None,
        query_version: None,
        crc32_responses: false,
        validate_input: false,
    };

    /// A target that fails its first `failures` deliveries (for good when `permanent`),
    /// and the source of the events it receives, hearing which of them failed for good.
    struct Sink {
        failures: u32,
        permanent: bool,
        attempts: AtomicU32,
        failed_for_good: std::sync::Mutex<Vec<String>>,
    }

    impl Service for Sink {
        fn spec(&self) -> &'static ServiceSpec {
            &SPEC
        }

        fn call<'a>(
            &'a self,
            _: &'a Context,
            op: &'a str,
            _: Request,
        ) -> BoxFuture<'a, AwsResult<Response>> {
            Box::pin(async move { Err(AwsError::not_implemented(op)) })
        }

        fn deliver<'a>(&'a self, _event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
            Box::pin(async move {
                let n = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
                let message = format!("attempt {n} refused");
                match n <= self.failures {
                    true if self.permanent => Err(DeliveryError::permanent(message)),
                    true => Err(message.into()),
                    false => Ok(()),
                }
            })
        }

        fn delivery_failed(&self, event: &Event, error: &str) {
            self.failed_for_good
                .lock()
                .unwrap()
                .push(format!("{}: {error}", event.target));
        }
    }

    fn event(max_attempts: u32) -> Event {
        Event {
            kind: "test:Delivered".into(),
            source_service: "sink".into(),
            source: "arn:source".into(),
            target_service: "sink".into(),
            target: "arn:sink".into(),
            account: "000000000000".into(),
            region: "us-east-1".into(),
            payload: Value::map(),
            max_attempts,
        }
    }

    /// Publishes one event and waits for its last attempt: the attempts traced, and what
    /// the source heard failed for good.
    async fn deliveries(
        failures: u32,
        permanent: bool,
        max_attempts: u32,
    ) -> (Vec<crate::trace::TraceEntry>, Vec<String>) {
        let env = Arc::new(Env::new(
            Store::open(StoreMode::Ephemeral).unwrap(),
            100,
            "000000000000".into(),
            "us-east-1".into(),
            "localhost".into(),
        ));
        env.bus.set_retry_delay(Duration::from_millis(1));
        let sink = Arc::new(Sink {
            failures,
            permanent,
            attempts: AtomicU32::new(0),
            failed_for_good: std::sync::Mutex::new(Vec::new()),
        });
        let dispatcher = crate::Dispatcher::start(env.clone(), vec![sink.clone()]);
        env.bus.publish(event(max_attempts));
        let last = TraceFilter {
            kind: Some(TraceKind::Delivery),
            ..TraceFilter::default()
        };
        for _ in 0..200 {
            let found = env.trace.query(&last);
            if found
                .iter()
                .any(|e| e.outcome.as_deref() != Some("retrying"))
            {
                drop(dispatcher);
                let failed = sink.failed_for_good.lock().unwrap().clone();
                return (found, failed);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("delivery never finished");
    }

    #[tokio::test]
    async fn failed_deliveries_are_retried_and_every_attempt_traced() {
        let (entries, failed_for_good) = deliveries(2, false, 3).await;
        let outcomes: Vec<_> = entries
            .iter()
            .map(|e| (e.attempt, e.outcome.clone()))
            .collect();
        assert_eq!(
            outcomes,
            [
                (Some(1), Some("retrying".into())),
                (Some(2), Some("retrying".into())),
                (Some(3), Some("delivered".into()))
            ]
        );
        assert_eq!(entries[0].detail.as_deref(), Some("attempt 1 refused"));
        assert_eq!(entries[2].target.as_deref(), Some("arn:sink"));
        assert!(failed_for_good.is_empty());
    }

    #[tokio::test]
    async fn deliveries_that_keep_failing_end_as_failed_and_tell_their_source() {
        let (entries, failed_for_good) = deliveries(5, false, 2).await;
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].outcome.as_deref(), Some("failed"));
        assert_eq!(failed_for_good, ["arn:sink: attempt 2 refused"]);
    }

    #[tokio::test]
    async fn permanent_failures_end_at_their_first_attempt() {
        let (entries, failed_for_good) = deliveries(5, true, 3).await;
        let outcomes: Vec<_> = entries
            .iter()
            .map(|e| (e.attempt, e.outcome.clone()))
            .collect();
        assert_eq!(outcomes, [(Some(1), Some("failed".into()))]);
        assert_eq!(failed_for_good, ["arn:sink: attempt 1 refused"]);
    }
}
