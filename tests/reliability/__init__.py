"""Reliability and security tests: faults survived, hostile input tried, nothing lost, nothing
let in. ``python tests/reliability/count_cases.py`` prints the table of cases they try."""
