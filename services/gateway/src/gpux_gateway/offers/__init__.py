"""Sellers' offers: submitted as commands, shown as pricing and the book report them."""
