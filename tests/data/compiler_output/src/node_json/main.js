const text = '{"a": 1,}';
console.log("parsing");
const data = JSON.parse(text);
console.log(data.a);
