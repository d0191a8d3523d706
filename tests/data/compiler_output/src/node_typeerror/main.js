const users = [{ name: { first: "Ada" } }, { nick: "bob" }];

function greet(user) {
  return "hello " + user.name.first;
}

for (const u of users) {
  console.log(greet(u));
}
