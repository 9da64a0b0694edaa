//! Sizes in bytes as text: an integer (`32768`) or a number with a binary
//! unit (`"32KiB"`, `"1.5KiB"`), exact both ways, like durations in
//! [`super::time`].

/// Parses `"32KiB"`, `"5MiB"`, `"1GiB"`, `"100B"`, `"1.5KiB"` (a whole
/// number of bytes) or a plain integer.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => {
            return Err(format!(
                "size `{text}` has unknown unit `{other}`: use B, KiB, MiB or GiB (or an integer number of bytes)"
            ))
        }
    };
    let num = num.replace('_', "");
    let bad = || format!("size `{text}` is not a number of bytes, e.g. 32768 or \"32KiB\"");
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num.as_str(), ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(bad());
    }
    let int: u64 = match int_part {
        "" => 0,
        i => i.parse().map_err(|_| bad())?,
    };
    let large = || format!("size `{text}` is too large");
    let mut total = int.checked_mul(scale).ok_or_else(large)?;
    if !frac_part.is_empty() {
        if !frac_part.bytes().all(|b| b.is_ascii_digit()) || frac_part.len() > 18 {
            return Err(bad());
        }
        let (digits, den) = (
            frac_part.parse::<u128>().map_err(|_| bad())?,
            10u128.pow(frac_part.len() as u32),
        );
        let frac = digits * u128::from(scale);
        if frac % den != 0 {
            return Err(format!("size `{text}` is not a whole number of bytes"));
        }
        let frac = u64::try_from(frac / den).map_err(|_| large())?;
        total = total.checked_add(frac).ok_or_else(large)?;
    }
    Ok(total)
}

/// The exact text of a size: in the largest binary unit that holds it
/// exactly (`"32KiB"`, `"5MiB"`), or `"100B"`.
pub fn bytes_text(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    UNITS
        .into_iter()
        .find(|(_, scale)| n != 0 && n.is_multiple_of(*scale))
        .map_or_else(
            || format!("{n}B"),
            |(unit, scale)| format!("{}{unit}", n / scale),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print_exactly() {
        for (text, n) in [
            ("0", 0),
            ("100", 100),
            ("100B", 100),
            ("1KiB", 1024),
            ("1.5KiB", 1536),
            ("32KiB", 32 << 10),
            (" 5MiB ", 5 << 20),
            ("1_024", 1024),
            ("1GiB", 1 << 30),
            ("0.5MiB", 512 << 10),
        ] {
            assert_eq!(parse_bytes(text), Ok(n), "{text}");
        }
        for bad in [
            "",
            "KiB",
            "1KB",
            "1.3B",
            "1.1KiB",
            "x",
            "1..2KiB",
            "99999999999GiB",
        ] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        for n in [
            0,
            1,
            100,
            1023,
            1024,
            1536,
            32 << 10,
            5 << 20,
            3 << 30,
            u64::MAX,
        ] {
            assert_eq!(parse_bytes(&bytes_text(n)), Ok(n), "{n}");
        }
        assert_eq!(bytes_text(32 << 10), "32KiB");
        assert_eq!(bytes_text(1536), "1536B");
        assert_eq!(bytes_text(5 << 20), "5MiB");
    }
}
