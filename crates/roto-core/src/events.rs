//! The event bus: asynchronous deliveries between services.
//!
//! A service that causes an effect elsewhere (S3 notifying a queue, SNS fanning out,
//! EventBridge invoking a target) publishes an [`Event`] and returns to its caller at once,
//! as AWS does. A background worker hands each event to the target service's
//! [`Service::deliver`](crate::dispatch::Service::deliver), retrying with exponential
//! back-off, and records every attempt in the trace.

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
            while let Some(event) = rx.recv().await {
                let dispatcher = dispatcher.clone();
                tokio::spawn(async move { deliver(dispatcher, event).await });
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
            None => Err(format!("no service named {}", event.target_service)),
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
        let retry = result.is_err() && attempt < attempts;
        entry.outcome = Some(
            match (&result, retry) {
                (Ok(()), _) => "delivered",
                (Err(_), true) => "retrying",
                (Err(_), false) => "failed",
            }
            .into(),
        );
        entry.detail = result.as_ref().err().cloned();
        d.env.trace.record(entry);
        if !retry {
            return;
        }
        let delay = d.env.bus.retry_delay() * 2u32.saturating_pow(attempt - 1);
        drop(d);
        tokio::time::sleep(delay).await;
    }
}
