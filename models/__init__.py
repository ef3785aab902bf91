"""Networks and their input pipelines; they know nothing about devices or sessions."""
