fn half(n: i32) -> i32 {
    n / 2
}

fn main() {
    let a: i32 = "one";
    let b = half(2.5);
    let c = half(1, 2);
    let d: String = 5;
    let e = undefined_fn(3);
    println!("{} {} {} {} {}", a, b, c, d, e);
}
