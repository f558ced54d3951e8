//! Writes raw schemars output (before the profile) for a range of types as schema_profile seeds.
#![allow(dead_code)]
use std::collections::{BTreeMap, HashMap};
use mcp_runtime::schema::{SchemaDirection, generator};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema)] enum Unit { A, B }
#[derive(Serialize, Deserialize, JsonSchema)] enum Documented { /// a
 A, /// b
 B }
#[derive(Serialize, Deserialize, JsonSchema)] #[serde(tag = "t")] enum Tagged { X { a: u8 }, Y { b: Option<String> } }
#[derive(Serialize, Deserialize, JsonSchema)] #[serde(untagged)] enum Untagged { I(i64), S(String), L(Vec<u8>) }
#[derive(Serialize, Deserialize, JsonSchema)] enum Ext { N(u32), P { x: f32 }, U }
#[derive(Serialize, Deserialize, JsonSchema)] struct Tree { v: i32, kids: Vec<Tree> }
#[derive(Serialize, Deserialize, JsonSchema)] struct A2 { b: Box<Option<B2>> }
#[derive(Serialize, Deserialize, JsonSchema)] struct B2 { a: Option<A2>, u: Unit }
#[derive(Serialize, Deserialize, JsonSchema)] struct Leaf { /// doc
 #[schemars(email)] e: String, #[schemars(url)] u: String, d: Option<f64>, n: u64, i: i8 }
#[derive(Serialize, Deserialize, JsonSchema)] struct Diamond { l: Leaf, r: Leaf, m: HashMap<String, Leaf>, o: BTreeMap<String, Option<Leaf>> }
#[derive(Serialize, Deserialize, JsonSchema)] struct Flat { #[serde(flatten)] inner: Leaf, extra: (u8, String, Unit) }
#[derive(Serialize, Deserialize, JsonSchema)] struct Defaults { #[serde(default)] a: Vec<Documented>, #[serde(rename = "a/b~c")] weird: Tagged, t: Ext, x: Untagged, opt: Option<Option<u8>> }
#[derive(Serialize, Deserialize, JsonSchema)] struct Generic<T> { t: T, ts: Vec<T> }
#[derive(Serialize, Deserialize, JsonSchema)] struct Uses { g: Generic<Leaf>, h: Generic<Unit>, n: serde_json::Value, c: char, arr: [u16; 3], s: std::collections::HashSet<String> }

fn out<T: JsonSchema>(name: &str) {
    for (p, tag) in [(SchemaDirection::Input, "in"), (SchemaDirection::Output, "out")] {
        let v = generator(p).into_root_schema_for::<T>().to_value();
        let dir = "/work/wt-fuzz/fuzz/corpus/schema_profile";
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(format!("{dir}/seed-schemars-{name}-{tag}"), serde_json::to_vec(&v).unwrap()).unwrap();
        let fdir = "/work/wt-fuzz/fuzz/corpus/form";
        std::fs::create_dir_all(fdir).unwrap();
        if tag == "in" { std::fs::write(format!("{fdir}/seed-schemars-{name}"), serde_json::to_vec(&v).unwrap()).unwrap(); }
    }
}
fn main() {
    out::<Unit>("unit"); out::<Documented>("documented"); out::<Tagged>("tagged"); out::<Untagged>("untagged");
    out::<Ext>("ext"); out::<Tree>("tree"); out::<A2>("mutual"); out::<Leaf>("leaf"); out::<Diamond>("diamond");
    out::<Flat>("flat"); out::<Defaults>("defaults"); out::<Uses>("uses"); out::<Option<Leaf>>("option");
    out::<Vec<Tree>>("vec"); out::<(u8, Tree)>("tuple");
}
