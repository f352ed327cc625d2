//! Roto services.
