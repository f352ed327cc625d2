//! The advanceable clock, in a process of its own so advancing it moves no other test's time.

use std::time::{Duration, Instant};

use roto_core::timestamp::{advance_clock, clock_offset, now_millis, sleep_until};

#[tokio::test]
async fn advancing_moves_now_and_wakes_sleepers_early() {
    let before = now_millis();
    let deadline = before + 3_600_000;
    let sleeper = tokio::spawn(sleep_until(deadline));
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!sleeper.is_finished());

    let started = Instant::now();
    advance_clock(3_600_000);
    tokio::time::timeout(Duration::from_secs(5), sleeper)
        .await
        .expect("the sleeper woke when the clock passed its deadline")
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(now_millis() >= deadline);
    assert_eq!(clock_offset(), 3_600_000);

    let short = tokio::spawn(sleep_until(now_millis() + 7_200_000));
    advance_clock(60_000);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(
        !short.is_finished(),
        "an advance short of the deadline does not wake it for good"
    );
    short.abort();
}
