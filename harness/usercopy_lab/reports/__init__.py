"""reports: read console logs and parse the kernel reports in them (syzkaller title rules, usercopy fields)."""
