"""run: suites and triggers, the run loop that boots them N at a time, the run folder."""
