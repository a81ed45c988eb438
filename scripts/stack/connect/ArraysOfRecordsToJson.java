/*
 * Kafka Connect single message transform for the warehouse sink (compiled by scripts/stack.sh into a plugin jar).
 *
 * gamedata.connect.ArraysOfRecordsToJson$Value replaces every top-level field of the value whose schema is an
 * ARRAY of STRUCTs (or of MAPs, or a MAP) by an optional STRING holding the same data as JSON, with the schema name
 * io.debezium.data.Json and the column type JSONB: Debezium's JDBC sink then writes it to a PostgreSQL jsonb column.
 * Put it after Flatten$Value (which leaves arrays in place), so nested arrays are top-level fields by then.
 * Arrays of primitives are left alone (the sink stores them as PostgreSQL arrays). Other values pass unchanged.
 * JSON: structs are objects (field order kept), bytes are base64 strings, dates (Connect logical types) are epoch
 * milliseconds, numbers and booleans as themselves, null as null.
 */
package gamedata.connect;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Collection;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.transforms.Transformation;

public abstract class ArraysOfRecordsToJson<R extends ConnectRecord<R>> implements Transformation<R> {
  static final String JSON_SCHEMA_NAME = "io.debezium.data.Json";

  /** Applies to the record value. */
  public static final class Value<R extends ConnectRecord<R>> extends ArraysOfRecordsToJson<R> {}

  private final java.util.Map<Schema, Schema> schemaCache = new java.util.IdentityHashMap<>();

  @Override
  public void configure(Map<String, ?> configs) {}

  @Override
  public ConfigDef config() {
    return new ConfigDef();
  }

  @Override
  public void close() {}

  @Override
  public R apply(R record) {
    Schema schema = record.valueSchema();
    if (schema == null || schema.type() != Schema.Type.STRUCT || !(record.value() instanceof Struct)) return record;
    Schema target;
    synchronized (schemaCache) {
      target = schemaCache.computeIfAbsent(schema, ArraysOfRecordsToJson::convertSchema);
    }
    if (target == schema) return record;
    Struct in = (Struct) record.value();
    Struct out = new Struct(target);
    for (Field field : schema.fields()) {
      Object value = in.get(field);
      out.put(field.name(), isJsonField(field.schema()) && value != null ? toJson(value) : value);
    }
    return record.newRecord(record.topic(), record.kafkaPartition(), record.keySchema(), record.key(), target, out,
        record.timestamp(), record.headers());
  }

  static boolean isJsonField(Schema s) {
    if (s.type() == Schema.Type.MAP) return true;
    if (s.type() != Schema.Type.ARRAY) return false;
    Schema.Type items = s.valueSchema().type();
    return items == Schema.Type.STRUCT || items == Schema.Type.MAP || items == Schema.Type.ARRAY;
  }

  static Schema convertSchema(Schema schema) {
    boolean any = false;
    for (Field f : schema.fields()) any |= isJsonField(f.schema());
    if (!any) return schema;
    SchemaBuilder b = SchemaBuilder.struct().name(schema.name()).version(schema.version()).doc(schema.doc());
    if (schema.parameters() != null) b.parameters(schema.parameters());
    if (schema.isOptional()) b.optional();
    for (Field f : schema.fields()) {
      if (isJsonField(f.schema())) {
        b.field(f.name(), SchemaBuilder.string().name(JSON_SCHEMA_NAME).version(1)
            .parameter("__debezium.source.column.type", "JSONB").optional().build());
      } else {
        b.field(f.name(), f.schema());
      }
    }
    return b.build();
  }

  static String toJson(Object value) {
    StringBuilder sb = new StringBuilder();
    write(sb, value);
    return sb.toString();
  }

  private static void write(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Struct s) {
      sb.append('{');
      boolean first = true;
      for (Field f : s.schema().fields()) {
        if (!first) sb.append(',');
        first = false;
        writeString(sb, f.name());
        sb.append(':');
        write(sb, s.get(f));
      }
      sb.append('}');
    } else if (v instanceof Map<?, ?> m) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) sb.append(',');
        first = false;
        writeString(sb, String.valueOf(e.getKey()));
        sb.append(':');
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (v instanceof Collection<?> c) {
      sb.append('[');
      boolean first = true;
      for (Object o : c) {
        if (!first) sb.append(',');
        first = false;
        write(sb, o);
      }
      sb.append(']');
    } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long || v instanceof Short
        || v instanceof Byte || v instanceof java.math.BigDecimal) {
      sb.append(v);
    } else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isFinite(d)) sb.append(v); else writeString(sb, String.valueOf(v));
    } else if (v instanceof java.util.Date d) {
      sb.append(d.getTime());
    } else if (v instanceof byte[] bytes) {
      writeString(sb, Base64.getEncoder().encodeToString(bytes));
    } else if (v instanceof ByteBuffer buf) {
      byte[] bytes = new byte[buf.remaining()];
      buf.duplicate().get(bytes);
      writeString(sb, Base64.getEncoder().encodeToString(bytes));
    } else {
      writeString(sb, v.toString());
    }
  }

  private static void writeString(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) sb.append(String.format("\\u%04x", (int) c)); else sb.append(c);
        }
      }
    }
    sb.append('"');
  }
}
