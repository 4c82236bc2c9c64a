//! The verdict vocabulary: the properties of spec section 7 with their companions
//! ([`properties`]), the historical bugs as switches ([`bug`]) and the rules as labels
//! ([`rule`]).

pub mod bug;
pub mod properties;
pub mod rule;
