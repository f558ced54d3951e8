//! RFC 3339 (ISO 8601) UTC timestamps for task records.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `t + d`, or, past what `SystemTime` can hold (a lease or TTL of `Duration::MAX`), a
/// century after `t`: never a panic.
pub(crate) fn later(t: SystemTime, d: Duration) -> SystemTime {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 86_400);
    t.checked_add(d)
        .or_else(|| t.checked_add(CENTURY))
        .unwrap_or(t)
}

/// `t` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, milliseconds).
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::{later, rfc3339};

    #[test]
    fn later_saturates() {
        let now = std::time::SystemTime::now();
        assert_eq!(
            later(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
        assert!(later(now, Duration::MAX) > now + Duration::from_secs(365 * 86_400));
        // A date read back from a store may be anywhere: far in the future, it stays put.
        let far = UNIX_EPOCH + Duration::from_secs(i64::MAX as u64 / 2);
        let _ = later(far, Duration::MAX);
        assert!(!rfc3339(far).is_empty());
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century year) 12:34:56.789
        let t = UNIX_EPOCH + Duration::from_millis(951_827_696_789);
        assert_eq!(rfc3339(t), "2000-02-29T12:34:56.789Z");
        // 2026-12-02T06:30:00Z
        let t = UNIX_EPOCH + Duration::from_secs(1_796_193_000);
        assert_eq!(rfc3339(t), "2026-12-02T06:30:00.000Z");
    }
}
