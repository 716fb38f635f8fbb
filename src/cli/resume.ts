import { drainCommand } from "./drains.ts";

export default drainCommand("resume");
