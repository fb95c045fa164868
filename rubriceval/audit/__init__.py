"""Team audits: sampling verdicts into tasks, who reviews what, routing to the lead, logins and sessions.

sampling.py   which verdicts a task holds (stratified by judge score and tag by default) and who reviews each
routing.py    which items go to the lead (unsure, experts ≥ 2 apart, a pass/fail split)
passwords.py  salted password hashes and the auth file (one user a line, with a role)
sessions.py   logins that expire and failed logins that are throttled (per user and per address)
metric_agreement.py  expert corrections of per-statement / per-context metric verdicts, and the metric's agreement
"""
