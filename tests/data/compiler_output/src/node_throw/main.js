function parseAge(text) {
  const n = Number(text);
  if (Number.isNaN(n)) {
    throw new Error(`not a number: ${text}`);
  }
  return n;
}

console.log("age", parseAge("41"));
console.log("age", parseAge("forty"));
