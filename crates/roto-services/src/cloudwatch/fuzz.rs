//! Entry point for the fuzzer (`crates/roto-fuzz`): a composite alarm rule parsed and
//! evaluated. It exists so the fuzzer can reach a private module; nothing in the server
//! calls it.

use super::rule;

/// Parses `text` as PutCompositeAlarm reads an AlarmRule, and evaluates it with every alarm
/// in ALARM except those whose name starts with `o`.
pub fn fuzz_alarm_rule(text: &str) {
    if let Ok(rule) = rule::parse(text) {
        let names = rule.alarms().len();
        let state =
            |name: &str| Some(if name.starts_with('o') { "OK" } else { "ALARM" }.to_string());
        let _ = (names, rule.holds(&state));
    }
}
