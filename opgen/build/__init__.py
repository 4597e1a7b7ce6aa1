"""opgen/build"""
