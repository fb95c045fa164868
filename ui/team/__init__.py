"""The team audit app: logins and roles, assigned blind reviews, adjudication, appeals and calibration sessions, on one
shared store."""
