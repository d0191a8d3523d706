async function load(id) {
  if (id > 1) {
    throw new RangeError(`no record ${id}`);
  }
  return { id };
}

async function main() {
  console.log(await load(1));
  console.log(await load(2));
}

main();
