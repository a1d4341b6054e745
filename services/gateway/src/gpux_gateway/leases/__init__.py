"""Leases (both parties' view), the stop command, statements and sellers' earnings."""
