fn pick(xs: &[i32], i: usize) -> i32 {
    xs[i]
}

fn main() {
    let xs = vec![10, 20, 30];
    for i in 0..6 {
        println!("pick {} = {}", i, pick(&xs, i));
    }
}
