fn depth(n: u64) -> u64 {
    let buf = [n; 64];
    depth(n + 1) + buf[(n % 64) as usize]
}

fn main() {
    println!("recursing");
    println!("{}", depth(0));
}
