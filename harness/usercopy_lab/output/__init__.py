"""output: the result formats (results.json, KTAP, JUnit, markdown, the HTML pages) and their checks."""
