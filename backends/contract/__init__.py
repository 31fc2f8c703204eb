"""The Backend contract every library module implements: the `Backend` class, the
namespace wrappers, and the random stream dropout draws from. Imports nothing of the project."""
