"""output: results.json / KTAP / JUnit / markdown, their checks, and the LAVA jobs and checks."""
