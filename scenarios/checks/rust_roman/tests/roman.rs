use roman::{from_roman, to_roman};

#[test]
fn small_numbers() {
    assert_eq!(to_roman(1), "I");
    assert_eq!(to_roman(4), "IV");
    assert_eq!(to_roman(9), "IX");
    assert_eq!(to_roman(14), "XIV");
}

#[test]
fn large_numbers() {
    assert_eq!(to_roman(1994), "MCMXCIV");
    assert_eq!(to_roman(3999), "MMMCMXCIX");
}

#[test]
fn parses_numerals() {
    assert_eq!(from_roman("MCMXCIV"), Some(1994));
    assert_eq!(from_roman("XL"), Some(40));
}

#[test]
fn round_trip() {
    for n in 1..=3999 {
        assert_eq!(from_roman(&to_roman(n)), Some(n), "round trip of {}", n);
    }
}

#[test]
fn rejects_invalid() {
    assert_eq!(from_roman(""), None);
    assert_eq!(from_roman("ABC"), None);
    assert_eq!(from_roman("IIII"), None);
}
