// A peer built from the reference framework's own libp2p configuration (aikyo's companion server: tcp, noise,
// yamux, identify, gossipsub {allowPublishToZeroTopicPeers, emitSelf}, mDNS when asked, /aikyo/metadata/1.0.0),
// at the reference's package versions (package.json). Written for Madoi's interop tests; driven over stdin/stdout
// with one JSON object per line.
//
// argv[2]: this node's companion metadata as JSON ({id, name, personality, story, sample}).
// stdin:  {"cmd":"dial","addr":MULTIADDR} | {"cmd":"publish","topic":T,"data":OBJECT_OR_ARRAY} | {"cmd":"stop"}
// stdout: {"event":"ready","peerId","addrs"} | {"event":"connected","peer"} | {"event":"metadata","peer","metadata"}
//         | {"event":"message","topic","peer","data"} | {"event":"published","topic"} | {"event":"error","error"}
import { createInterface } from "node:readline";
import { gossipsub } from "@chainsafe/libp2p-gossipsub";
import { noise } from "@chainsafe/libp2p-noise";
import { yamux } from "@chainsafe/libp2p-yamux";
import { identify } from "@libp2p/identify";
import { mdns } from "@libp2p/mdns";
import { tcp } from "@libp2p/tcp";
import { multiaddr } from "@multiformats/multiaddr";
import { createLibp2p } from "libp2p";

const METADATA_PROTOCOL = "/aikyo/metadata/1.0.0";
const metadata = JSON.parse(process.argv[2]);
const useMdns = process.argv.includes("--mdns");
const out = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const known = new Map(); // peer id -> metadata (the reference's companionList)

const node = await createLibp2p({
  addresses: { listen: ["/ip4/127.0.0.1/tcp/0"] },
  transports: [tcp()],
  peerDiscovery: useMdns ? [mdns()] : [],
  connectionEncrypters: [noise()],
  streamMuxers: [yamux()],
  services: {
    pubsub: gossipsub({ allowPublishToZeroTopicPeers: true, emitSelf: true }),
    identify: identify(),
  },
});

node.addEventListener("peer:discovery", (evt) => {
  node.dial(evt.detail.multiaddrs).catch((error) => out({ event: "error", error: String(error) }));
});
for (const topic of ["messages", "states", "queries", "actions"]) node.services.pubsub.subscribe(topic);
node.services.pubsub.addEventListener("message", (evt) => {
  const { topic, data } = evt.detail;
  const peer = evt.detail.type === "signed" ? evt.detail.from.toString() : null;
  let parsed;
  try {
    parsed = JSON.parse(new TextDecoder().decode(data));
  } catch {
    parsed = { unparsable: new TextDecoder().decode(data) };
  }
  out({ event: "message", topic, peer, signed: evt.detail.type === "signed", data: parsed });
});

// The reference's metadata protocol: the answering side writes its metadata as one raw JSON chunk and closes.
await node.handle(METADATA_PROTOCOL, async ({ stream, connection }) => {
  if (known.has(connection.remotePeer.toString())) return stream.close();
  await stream.sink([new TextEncoder().encode(JSON.stringify(metadata))]);
  await stream.close();
});
node.addEventListener("peer:identify", async (evt) => {
  const peer = evt.detail.peerId.toString();
  out({ event: "connected", peer, protocols: evt.detail.protocols });
  if (known.has(peer) || !evt.detail.protocols.includes(METADATA_PROTOCOL)) return;
  try {
    const stream = await node.dialProtocol(evt.detail.peerId, METADATA_PROTOCOL);
    const chunks = [];
    for await (const chunk of stream.source) chunks.push(chunk.subarray());
    if (chunks.length) {
      const meta = JSON.parse(new TextDecoder().decode(Buffer.concat(chunks)));
      known.set(peer, meta);
      out({ event: "metadata", peer, metadata: meta });
    }
    await stream.close();
  } catch (error) {
    out({ event: "error", error: `metadata from ${peer}: ${error}` });
  }
});
node.addEventListener("peer:disconnect", (evt) => {
  known.delete(evt.detail.toString());
  out({ event: "disconnected", peer: evt.detail.toString() });
});

out({ event: "ready", peerId: node.peerId.toString(), addrs: node.getMultiaddrs().map((a) => a.toString()) });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  try {
    const cmd = JSON.parse(line);
    if (cmd.cmd === "dial") {
      await node.dial(multiaddr(cmd.addr));
      out({ event: "dialed", addr: cmd.addr });
    } else if (cmd.cmd === "publish") {
      const payload = typeof cmd.raw === "string" ? cmd.raw : JSON.stringify(cmd.data);
      await node.services.pubsub.publish(cmd.topic, new TextEncoder().encode(payload));
      out({ event: "published", topic: cmd.topic });
    } else if (cmd.cmd === "peers") {
      out({ event: "peers", topic: cmd.topic, peers: node.services.pubsub.getSubscribers(cmd.topic).map(String) });
    } else if (cmd.cmd === "stop") {
      break;
    }
  } catch (error) {
    out({ event: "error", error: String(error) });
  }
}
await node.stop();
process.exit(0);
