/// Whether `year` is a leap year in the Gregorian calendar.
pub fn is_leap_year(year: u32) -> bool {
    todo!("is {year} a leap year?")
}

/// The number of days in `month` (1 = January ... 12 = December) of `year`.
pub fn days_in_month(year: u32, month: u32) -> u32 {
    todo!("days in {year}-{month}")
}
