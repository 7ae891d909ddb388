"""triage: the lab's parser on kernel logs from anywhere (consoles, dmesg, syslog, mail): classify, title, deduplicate, diff against a baseline."""
