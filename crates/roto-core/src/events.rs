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
//! proceed in parallel, each on a task that ends when its target has nothing left.
//!
//! The bus is bounded without ever dropping an event: a request that published waits,
//! before it answers, until fewer than [`CAPACITY`] deliveries are pending, so memory
//! follows the bound and not the size of a burst. A delivery never waits for room, even
//! when it publishes in turn (SNS fanning out an S3 notification): it may be the very lane
//! that room depends on. Lanes therefore always move, and every waiting producer resumes.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use tokio::runtime::Handle;
use tokio::sync::Notify;

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

/// How many deliveries the bus holds (queued, or being attempted) before a request that
/// publishes waits for room.
pub const CAPACITY: usize = 4096;

/// One target's events: one lane per (target service, target), delivered in order.
type LaneKey = (String, String);

tokio::task_local! {
    /// Set while the bus runs a delivery: what a delivery publishes never waits for room,
    /// since only the lanes it may be holding up could make that room.
    static DELIVERING: ();
    /// Set while a request runs under [`EventBus::producing`]: whether it published.
    static PUBLISHED: Cell<bool>;
}

/// The bus: publishers queue events on their target's lane; a lane's task delivers them
/// one after another and ends when its lane is empty. The bus is bounded: a request that
/// published waits, before it answers, until fewer than [`CAPACITY`] deliveries are pending.
pub struct EventBus {
    lanes: Mutex<HashMap<LaneKey, VecDeque<Event>>>,
    pending: AtomicUsize,
    capacity: AtomicUsize,
    room: Notify,
    worker: OnceLock<(Weak<Dispatcher>, Handle)>,
    retry_delay: Mutex<Duration>,
}

impl Default for EventBus {
    fn default() -> EventBus {
        EventBus::new()
    }
}

impl EventBus {
    /// A bus whose lanes have not started yet (events queue until they do).
    pub fn new() -> EventBus {
        EventBus {
            lanes: Mutex::new(HashMap::new()),
            pending: AtomicUsize::new(0),
            capacity: AtomicUsize::new(CAPACITY),
            room: Notify::new(),
            worker: OnceLock::new(),
            retry_delay: Mutex::new(Duration::from_secs(1)),
        }
    }

    /// Queues an event on its target's lane; never drops it, and blocks only to make the
    /// publishing call's writes durable first (durable mode). The request publishing it
    /// waits for room afterwards (see [`EventBus::producing`]).
    pub fn publish(&self, event: Event) {
        if let Err(e) = crate::store::sync_deferred() {
            tracing::error!("an event's cause did not reach the disk: {e}");
        }
        self.pending.fetch_add(1, Ordering::SeqCst);
        let _ = PUBLISHED.try_with(|published| published.set(true));
        let key = (event.target_service.clone(), event.target.clone());
        let mut lanes = self.lanes();
        match lanes.get_mut(&key) {
            Some(lane) => lane.push_back(event),
            None => {
                lanes.insert(key.clone(), VecDeque::from([event]));
                if let Some((dispatcher, runtime)) = self.worker.get() {
                    runtime.spawn(run_lane(dispatcher.clone(), key));
                }
            }
        }
    }

    /// Runs `work` (one request) and, when it published outside a delivery, waits until
    /// the bus has room again before returning its output: a burst of events slows its
    /// producers instead of growing without bound.
    pub async fn producing<F: Future>(&self, work: F) -> F::Output {
        if DELIVERING.try_with(|_| ()).is_ok() {
            return work.await;
        }
        let (output, published) = PUBLISHED
            .scope(Cell::new(false), async {
                let output = work.await;
                (output, PUBLISHED.with(Cell::get))
            })
            .await;
        if published {
            self.wait_for_room().await;
        }
        output
    }

    /// Deliveries queued or being attempted.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }

    async fn wait_for_room(&self) {
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.pending() < self.capacity.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }

    #[cfg(test)]
    fn set_capacity(&self, capacity: usize) {
        self.capacity.store(capacity, Ordering::SeqCst);
    }

    /// Sets the delay before the first retry (doubled for each later one).
    pub fn set_retry_delay(&self, delay: Duration) {
        *self.retry_delay.lock().unwrap_or_else(|p| p.into_inner()) = delay;
    }

    fn retry_delay(&self) -> Duration {
        *self.retry_delay.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lanes(&self) -> MutexGuard<'_, HashMap<LaneKey, VecDeque<Event>>> {
        self.lanes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lane's next event; `None` (and the lane gone) when it is empty.
    fn next(&self, key: &LaneKey) -> Option<Event> {
        let mut lanes = self.lanes();
        let event = lanes.get_mut(key)?.pop_front();
        if event.is_none() {
            lanes.remove(key);
        }
        event
    }

    /// One delivery finished (delivered, or failed for good): room for another.
    fn delivered(&self) {
        self.pending.fetch_sub(1, Ordering::SeqCst);
        self.room.notify_waiters();
    }

    /// Starts the lanes on the current tokio runtime, those of events published before
    /// included; later calls do nothing.
    pub(crate) fn start(&self, dispatcher: Weak<Dispatcher>) {
        let lanes = self.lanes();
        if self
            .worker
            .set((dispatcher.clone(), Handle::current()))
            .is_err()
        {
            return;
        }
        for key in lanes.keys() {
            tokio::spawn(run_lane(dispatcher.clone(), key.clone()));
        }
    }
}

/// A lane's task: delivers the lane's events in order, and ends once it is empty.
async fn run_lane(dispatcher: Weak<Dispatcher>, key: LaneKey) {
    loop {
        let Some(event) = dispatcher.upgrade().and_then(|d| d.env.bus.next(&key)) else {
            return;
        };
        deliver(dispatcher.clone(), event).await;
        if let Some(d) = dispatcher.upgrade() {
            d.env.bus.delivered();
        }
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
            Some(service) => DELIVERING.scope((), service.deliver(&event)).await,
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
            if let Some(source) = d.service(&event.source_service) {
                match &result {
                    Ok(()) => source.delivered(&event),
                    Err(error) => source.delivery_failed(&event, &error.message),
                }
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

    fn env() -> Arc<Env> {
        let env = Arc::new(Env::new(
            Store::open(StoreMode::Ephemeral).unwrap(),
            100,
            "000000000000".into(),
            "us-east-1".into(),
            "localhost".into(),
        ));
        env.bus.set_retry_delay(Duration::from_millis(1));
        env
    }

    /// Publishes one event and waits for its last attempt: the attempts traced, and what
    /// the source heard failed for good.
    async fn deliveries(
        failures: u32,
        permanent: bool,
        max_attempts: u32,
    ) -> (Vec<crate::trace::TraceEntry>, Vec<String>) {
        let env = env();
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

    static RELAY: ServiceSpec = ServiceSpec {
        name: "relay",
        ..SPEC
    };

    /// A target that records what it receives once its gate lets it, and publishes
    /// `relay` events to `sink` for each through an operation's path (as an EventBridge
    /// target calls SNS Publish, which fans out in turn).
    struct Probe {
        spec: &'static ServiceSpec,
        env: Arc<Env>,
        gate: tokio::sync::Semaphore,
        relay: usize,
        received: std::sync::Mutex<Vec<String>>,
    }

    impl Probe {
        fn new(
            spec: &'static ServiceSpec,
            env: &Arc<Env>,
            permits: usize,
            relay: usize,
        ) -> Arc<Probe> {
            Arc::new(Probe {
                spec,
                env: env.clone(),
                gate: tokio::sync::Semaphore::new(permits),
                relay,
                received: std::sync::Mutex::new(Vec::new()),
            })
        }

        fn received(&self) -> Vec<String> {
            self.received.lock().unwrap().clone()
        }
    }

    impl Service for Probe {
        fn spec(&self) -> &'static ServiceSpec {
            self.spec
        }

        fn call<'a>(
            &'a self,
            _: &'a Context,
            op: &'a str,
            _: Request,
        ) -> BoxFuture<'a, AwsResult<Response>> {
            Box::pin(async move { Err(AwsError::not_implemented(op)) })
        }

        fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
            Box::pin(async move {
                self.gate
                    .acquire()
                    .await
                    .map_err(|e| e.to_string())?
                    .forget();
                self.received.lock().unwrap().push(event.source.clone());
                let relay = async {
                    for n in 0..self.relay {
                        self.env
                            .bus
                            .publish(to("sink", format!("{}/{n}", event.source)));
                    }
                };
                self.env.bus.producing(relay).await;
                Ok(())
            })
        }
    }

    fn to(service: &str, source: String) -> Event {
        Event {
            target_service: service.into(),
            source,
            ..event(1)
        }
    }

    async fn drained(env: &Env) {
        for _ in 0..1000 {
            if env.bus.pending() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn a_producer_waits_while_the_bus_is_full_and_nothing_is_lost() {
        let env = env();
        env.bus.set_capacity(2);
        let sink = Probe::new(&SPEC, &env, 0, 0);
        let _dispatcher = crate::Dispatcher::start(env.clone(), vec![sink.clone()]);
        let producer = tokio::spawn({
            let env = env.clone();
            async move {
                let publish = async {
                    for n in 0..3 {
                        env.bus.publish(to("sink", n.to_string()));
                    }
                };
                env.bus.producing(publish).await
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !producer.is_finished(),
            "the producer answered with the bus full"
        );
        assert_eq!(env.bus.pending(), 3);
        sink.gate.add_permits(3);
        tokio::time::timeout(Duration::from_secs(10), producer)
            .await
            .expect("the producer never resumed")
            .unwrap();
        drained(&env).await;
        assert_eq!(sink.received(), ["0", "1", "2"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn deliveries_that_publish_never_wait_so_a_full_bus_drains() {
        let env = env();
        env.bus.set_capacity(2);
        let relay = Probe::new(&RELAY, &env, tokio::sync::Semaphore::MAX_PERMITS, 3);
        let sink = Probe::new(&SPEC, &env, tokio::sync::Semaphore::MAX_PERMITS, 0);
        let _dispatcher = crate::Dispatcher::start(env.clone(), vec![relay.clone(), sink.clone()]);
        let producers: Vec<_> = (0..5)
            .map(|p| {
                let env = env.clone();
                tokio::spawn(async move {
                    for n in 0..4 {
                        let publish = async { env.bus.publish(to("relay", format!("{p}.{n}"))) };
                        env.bus.producing(publish).await;
                    }
                })
            })
            .collect();
        for producer in producers {
            tokio::time::timeout(Duration::from_secs(10), producer)
                .await
                .expect("a producer never resumed: the bus deadlocked")
                .unwrap();
        }
        drained(&env).await;
        assert_eq!(relay.received().len(), 20);
        assert_eq!(sink.received().len(), 60);
        assert_eq!(env.bus.pending(), 0);
        assert!(
            env.bus.lanes().is_empty(),
            "a lane's task outlived its events"
        );
    }
}
