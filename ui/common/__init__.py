"""What the apps share: the loopback rule, page wording and relabelling, user-error display, transcript and item views,
CSS."""
