fn main() {
    let xs = vec![1, 2, 3]
    for x in &xs {
        println!("{}", x);
    }
}
