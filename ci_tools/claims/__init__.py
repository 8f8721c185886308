"""Claims in changelog entries and PR descriptions, checked against what each job runs."""
