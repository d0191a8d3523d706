fn average(xs: &[f64]) -> f64 {
    let total: f64 = xs.iter().sum();
    total / xs.len()
}

fn main() {
    let unused = 1;
    println!("{}", average(&[1.0, 2.0]));
}
