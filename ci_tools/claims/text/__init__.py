"""What a changelog entry or PR description claims: prose in, claims (subject, value, scope, span) out."""
