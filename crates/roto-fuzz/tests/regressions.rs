//! Replays every committed regression input and corpus entry through its target, each on a
//! tokio-sized stack: an input that once crashed or wedged a parser must keep passing, and
//! quickly.

use std::time::{Duration, Instant};

use roto_fuzz::harness::{on_small_stack, survives};
use roto_fuzz::targets::TARGETS;
use roto_fuzz::{corpus_dir, load, regressions_dir};

/// Longer than any input may take, unoptimised, on a loaded machine.
const SLOW: Duration = Duration::from_secs(10);

#[test]
fn every_regression_and_corpus_input_runs_without_a_crash() {
    for target in TARGETS {
        let inputs: Vec<Vec<u8>> = load(&regressions_dir(target.name))
            .into_iter()
            .chain(load(&corpus_dir(target.name)))
            .collect();
        let failed = on_small_stack(move || {
            inputs
                .iter()
                .filter(|input| {
                    let started = Instant::now();
                    !survives(target, input) || started.elapsed() > SLOW
                })
                .count()
        })
        .unwrap();
        assert_eq!(
            failed, 0,
            "{}: {failed} input(s) panicked or ran slowly",
            target.name
        );
    }
}

#[test]
fn every_target_has_a_corpus() {
    for target in TARGETS {
        assert!(
            !load(&corpus_dir(target.name)).is_empty(),
            "{} has no corpus",
            target.name
        );
    }
}
