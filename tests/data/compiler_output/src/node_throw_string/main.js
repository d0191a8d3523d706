function check(x) {
  if (x < 0) throw "negative input";
  return Math.sqrt(x);
}
console.log(check(4));
console.log(check(-1));
