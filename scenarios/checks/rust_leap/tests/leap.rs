use leap::{days_in_month, is_leap_year};

#[test]
fn divisible_by_four() {
    assert!(is_leap_year(1996));
    assert!(!is_leap_year(2023));
}

#[test]
fn centuries() {
    assert!(!is_leap_year(1900));
    assert!(is_leap_year(2000));
}

#[test]
fn february() {
    assert_eq!(days_in_month(2024, 2), 29);
    assert_eq!(days_in_month(2023, 2), 28);
    assert_eq!(days_in_month(1900, 2), 28);
}

#[test]
fn other_months() {
    assert_eq!(days_in_month(2023, 1), 31);
    assert_eq!(days_in_month(2023, 4), 30);
    assert_eq!(days_in_month(2023, 9), 30);
    assert_eq!(days_in_month(2023, 12), 31);
}
