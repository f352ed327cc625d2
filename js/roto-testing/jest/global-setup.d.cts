declare const globalSetup: () => Promise<void>;
export = globalSetup;
