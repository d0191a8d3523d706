// slugify(title) turns a title into a URL slug: lowercase ASCII letters and digits joined by single hyphens.
function slugify(title) {
  return title.toLowerCase().replace(' ', '-');
}

module.exports = { slugify };
