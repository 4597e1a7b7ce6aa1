"""opgen/gate"""
