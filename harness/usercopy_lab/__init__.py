"""usercopy-lab harness: boot, capture, parse, match, report and triage."""
