const xs = [1, 2, 3];
console.log("sum", xs.reduce((a, b) => a + b, 0));
console.log("mean", totl / xs.length);
