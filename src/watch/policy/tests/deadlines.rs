//! When something falls due without an event: no deadline is skipped, none is handed out twice.

use super::*;

/// Issue 50: five repairs of one pass failed within 0.1s; the look at the
/// first four, 2s later, took longer than that, and the fifth's pause ended
/// meanwhile. It was never handed out: it must be due at once.
#[test]
fn a_pause_that_ends_while_the_loop_is_busy_is_due_at_once() {
    let ms = |n: i64| Stamp::from_micros(n * 1000);
    let mut sup = Supervisor::new(GRACE);
    let s = stack(State::Failed, Some(Desired::Up), vec![exited("web", 1)]);
    assert_eq!(acts(&mut sup, &s, 0)[0].0, Act::Restart);
    sup.record("m", Attempt::Failed, ms(0));
    sup.record("n", Attempt::Failed, ms(100));
    assert_eq!(sup.next_due(ms(100)), Some(ms(2000)));
    assert_eq!(sup.due(ms(2000)), ["m"]);
    // The look at `m` took 300ms: `n`'s pause ended during it.
    assert_eq!(sup.next_due(ms(2300)), Some(ms(2100)));
    assert_eq!(sup.due(ms(2300)), ["m", "n"]);
    // Handed out: not due again (a waiting loop cannot spin).
    assert_eq!(sup.next_due(ms(2400)), None);
}
