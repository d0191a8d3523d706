fn parse(text: &str) -> i32 {
    text.trim().parse().expect("not a number")
}

fn main() {
    println!("{}", parse(" 42 "));
    println!("{}", parse("forty"));
}
