//! An enum knob's value as its serde name and back (`mq-deadline`, `per-bdi`), through serde
//! alone: a serializer that keeps a unit variant's name (or a string) and refuses the rest, and
//! serde's own string deserializer, so the page carries no JSON code for its knobs.

use serde::de::value::{Error, StrDeserializer};
use serde::ser::{Error as _, Impossible, Serialize, Serializer};
use serde::Deserialize;

/// An enum field's serde name; `None` for a value that is not a unit variant or a string.
pub(super) fn serde_name<T: Serialize>(v: &T) -> Option<String> {
    v.serialize(NameOnly).ok()
}

/// An enum field from its serde name (a unit variant's, or one of its aliases).
pub(super) fn from_serde_name<T: for<'de> Deserialize<'de>>(name: &str) -> Result<T, ()> {
    T::deserialize(StrDeserializer::<Error>::new(name)).map_err(|_| ())
}

struct NameOnly;

fn refuse<T>() -> Result<T, Error> {
    Err(Error::custom("not a unit variant"))
}

macro_rules! refuse_scalars {
    ($($method:ident($t:ty)),+ $(,)?) => {
        $(fn $method(self, _: $t) -> Result<String, Error> { refuse() })+
    };
}

impl Serializer for NameOnly {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<String, Error> {
        Ok(variant.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(v.to_string())
    }
    refuse_scalars!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
    );
    fn serialize_none(self) -> Result<String, Error> {
        refuse()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<String, Error> {
        refuse()
    }
    fn serialize_unit(self) -> Result<String, Error> {
        refuse()
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, _: &T) -> Result<String, Error> {
        refuse()
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<String, Error> {
        refuse()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        refuse()
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        refuse()
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        refuse()
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, Error> {
        refuse()
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        refuse()
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        refuse()
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, Error> {
        refuse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scheduler;

    /// The names are serde_json's, both ways, for every scheduler.
    #[test]
    fn names_are_serde_jsons() {
        for s in
            [Scheduler::Noop, Scheduler::Deadline, Scheduler::Cfq, Scheduler::MqDeadline, Scheduler::None, Scheduler::Bfq, Scheduler::Kyber]
        {
            let json = serde_json::to_value(s).unwrap();
            assert_eq!(serde_name(&s).as_deref(), json.as_str());
            assert_eq!(from_serde_name::<Scheduler>(json.as_str().unwrap()), Ok(s));
        }
        assert_eq!(from_serde_name::<Scheduler>("no-such-scheduler"), Err(()));
        assert_eq!(serde_name(&3u32), None);
    }
}
