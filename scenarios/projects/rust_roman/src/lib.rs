/// The Roman numeral of `n` (1..=3999), e.g. 1994 -> "MCMXCIV".
pub fn to_roman(n: u32) -> String {
    todo!("convert {n}")
}

/// The number a Roman numeral stands for, or None when the text is not a valid numeral.
pub fn from_roman(text: &str) -> Option<u32> {
    todo!("parse {text}")
}
