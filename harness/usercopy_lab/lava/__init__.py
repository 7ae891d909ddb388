"""lava: the suites as LAVA jobs (one per trigger and check), LAVA's own checks and their replay, and LAVA's verdicts compared with the lab's."""
