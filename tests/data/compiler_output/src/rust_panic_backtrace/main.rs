use std::collections::HashMap;

fn lookup(m: &HashMap<&str, i32>, key: &str) -> i32 {
    *m.get(key).unwrap()
}

fn main() {
    let mut m = HashMap::new();
    m.insert("a", 1);
    println!("a = {}", lookup(&m, "a"));
    println!("b = {}", lookup(&m, "b"));
}
